"""Stand-in for the team's entrypoints/eval_benchmarks.py so the examples dry-run on a fresh machine.

Point launcher.trainer_src (or --trainer-src) at your rlvr-experiments checkout to ship the real one.
"""

from rlvr_example import stand_in

stand_in()
