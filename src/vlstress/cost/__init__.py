"""The cost model of a grid of params (`vlstress cost`): the sizes of its sets (`sizes`), the
measured rates (`rates`), the relative cost of open_clip architectures (`profile`), the estimate
per suite, per model and for the shared work (`estimate`) and its Markdown and JSON (`report`).
It plans only: no module here imports a model library, a command, a stage declaration or the
params loader (the command passes the params' mapping)."""
