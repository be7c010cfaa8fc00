from hetlab.cli import run

raise SystemExit(run())
