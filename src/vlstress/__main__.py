import sys

from vlstress.cli import main

sys.exit(main())
