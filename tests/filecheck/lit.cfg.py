import os

import lit.formats

config.name = "xrelay"
config.test_format = lit.formats.ShTest(preamble_commands=[])
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]
# Tools come from the project's virtual environment, which the Makefile puts first on PATH.
config.environment["PATH"] = os.environ["PATH"]
