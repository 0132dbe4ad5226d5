import sys

from inferplane.cli import main

sys.exit(main())
