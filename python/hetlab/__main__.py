from hetlab.cli import main

raise SystemExit(main())
