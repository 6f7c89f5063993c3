import sys

from osint_selfplay.cli import main

sys.exit(main(sys.argv[1:]))
