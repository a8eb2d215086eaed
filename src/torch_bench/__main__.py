from torch_bench.cli import main

raise SystemExit(main())
