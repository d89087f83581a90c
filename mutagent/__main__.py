import sys

from mutagent.cli import main

sys.exit(main())
