import sys

from jaxcompat.commands import main

sys.exit(main())
