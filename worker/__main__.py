import sys

from squall.worker.main import main

sys.exit(main())
