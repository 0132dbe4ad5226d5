import sys

from inferplane.app.cli import main

sys.exit(main())
