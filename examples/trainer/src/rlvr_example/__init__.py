"""The examples' stand-in package: every entrypoint imports it, as the team's import rlvr_experiments."""

import sys


def stand_in() -> None:
    sys.exit("rlvr example stand-in: set launcher.trainer_src to your trainer repository")
