import sys

from osint_eval.cli import main

sys.exit(main(sys.argv[1:]))
