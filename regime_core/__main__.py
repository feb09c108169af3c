import sys

from regime_core.cli import main

sys.exit(main())
