"""moto_server with the SageMaker training-job lifecycle moto 5.2.1 lacks.

moto creates every training job already "Completed" and has no StopTrainingJob. Tests of
`rlvr stop`, `status`, `logs --follow` and `submit --wait` need jobs that run and can be stopped, so
this starts the real moto_server with these additions, at the emulator, behind real HTTP:
- StopTrainingJob: an InProgress job goes Stopping, then Stopped at its next read;
- with MOTO_TRAINING_SECONDS > 0, a new job is InProgress/Training for that many seconds, then
  Completed, with training and billable times. Spot jobs bill 30% of the training time;
- DescribeTrainingJob returns the job's Environment, as SageMaker does (moto drops it), and its
  MetricDefinitions as created (moto replaces them with a fixed one).
Usage: python3 moto_server_ext.py -H 127.0.0.1 -p PORT   (the arguments of moto_server)
"""

import datetime
import os
import sys

from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.sagemaker import models, responses
from moto.sagemaker.exceptions import ValidationError

RUN_SECONDS = float(os.environ.get("MOTO_TRAINING_SECONDS", "0"))

_original_init = models.FakeTrainingJob.__init__
_original_response = models.FakeTrainingJob.response_object


def _transition(status, message, start):
    return {"Status": status, "StartTime": start, "StatusMessage": message}


def _init(self, *args, **kwargs):
    spec = kwargs.get("algorithm_specification", args[4] if len(args) > 4 else None)
    given = (spec or {}).get("MetricDefinitions")
    _original_init(self, *args, **kwargs)
    if given is not None:
        self.algorithm_specification["MetricDefinitions"] = given
    self.rlvr_started = utcnow()
    if RUN_SECONDS > 0:
        self.training_job_status = "InProgress"
        self.secondary_status = "Training"
        self.training_end_time = None
        self.secondary_status_transitions = [
            _transition("Starting", "Preparing the instances for training", self.rlvr_started),
            _transition("Training", "Training image download completed. Training in progress.", self.rlvr_started),
        ]


def _finish(self, status, message):
    now = utcnow()
    last = self.secondary_status_transitions[-1]
    last["EndTime"] = now
    self.secondary_status_transitions.append(_transition(status, message, now))
    self.training_job_status = status
    self.secondary_status = status
    self.training_end_time = now
    seconds = max(1, int((now - self.rlvr_started).total_seconds()))
    self.training_time_in_seconds = seconds
    spot = bool(getattr(self, "enable_managed_spot_training", False))
    self.billable_time_in_seconds = max(1, int(seconds * 0.3)) if spot else seconds


def _refresh(self):
    if self.training_job_status == "Stopping":
        _finish(self, "Stopped", "Training job stopped by the user")
    elif (
        RUN_SECONDS > 0
        and self.training_job_status == "InProgress"
        and utcnow() - self.rlvr_started >= datetime.timedelta(seconds=RUN_SECONDS)
    ):
        _finish(self, "Completed", "Training job completed")


def _response(self):
    _refresh(self)
    response = _original_response.fget(self)
    response.pop("RlvrStarted", None)
    response.pop("RlvrEnvironment", None)
    # SageMaker returns the job's Environment; moto drops it.
    if getattr(self, "rlvr_environment", None):
        response["Environment"] = self.rlvr_environment
    return response


models.FakeTrainingJob.__init__ = _init
models.FakeTrainingJob.response_object = property(_response)

_original_list = models.SageMakerModelBackend.list_training_jobs


def _list_training_jobs(self, *args, **kwargs):
    for job in self.training_jobs.values():
        _refresh(job)
    return _original_list(self, *args, **kwargs)


def _stop_training_job(self, training_job_name):
    job = self.training_jobs.get(training_job_name)
    if job is None:
        raise ValidationError(message=f"Requested resource not found: training job {training_job_name}")
    if job.training_job_status != "InProgress":
        raise ValidationError(message=f"The training job {training_job_name} is not in progress ({job.training_job_status}).")
    job.training_job_status = "Stopping"
    job.secondary_status = "Stopping"
    job.secondary_status_transitions[-1]["EndTime"] = utcnow()
    job.secondary_status_transitions.append(_transition("Stopping", "Stopping the training job", utcnow()))


def _stop_training_job_response(self):
    self.sagemaker_backend.stop_training_job(self._get_param("TrainingJobName"))
    return ActionResult({})


_original_create_response = responses.SageMakerResponse.create_training_job


def _create_training_job_response(self):
    result = _original_create_response(self)
    job = self.sagemaker_backend.training_jobs.get(self._get_param("TrainingJobName"))
    if job is not None:
        job.rlvr_environment = self._get_param("Environment") or {}
    return result


models.SageMakerModelBackend.list_training_jobs = _list_training_jobs
responses.SageMakerResponse.create_training_job = _create_training_job_response
models.SageMakerModelBackend.stop_training_job = _stop_training_job
responses.SageMakerResponse.stop_training_job = _stop_training_job_response

if __name__ == "__main__":
    from moto.server import main

    main(sys.argv[1:])
