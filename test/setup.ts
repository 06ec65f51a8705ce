import { removeTempDirs } from './helpers/fixtures';

afterAll(removeTempDirs);
