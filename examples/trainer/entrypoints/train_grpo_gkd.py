"""Stand-in for the team's entrypoints/train_grpo_gkd.py so the examples dry-run on a fresh machine.

Point launcher.trainer_src (or --trainer-src) at your rlvr-experiments checkout to ship the real one.
"""
import sys

sys.exit("rlvr example stand-in: set launcher.trainer_src to your trainer repository")
