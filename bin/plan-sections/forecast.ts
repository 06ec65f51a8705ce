/** The section of the forecast: how long and how much, from similar past runs (its heading names the match). */
import { forecastSection as forecastText } from '../forecast-output';
import { planSection, row } from './section';

export const forecastSection = planSection({
  id: 'forecast',
  text: (plan) => forecastText(plan.forecast, row),
  json: (plan) => ({ forecast: { ...plan.forecast.forecast, resultsDir: plan.forecast.resultsDir } }),
});
