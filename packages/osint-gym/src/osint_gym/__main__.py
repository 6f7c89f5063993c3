import sys

from osint_gym.cli import main

sys.exit(main(sys.argv[1:]))
