"""From metric records to the paper: the long/aggregated summary tables (`records`), the task
registry (`tasks`), and what the suites' figures (`figures`) and tables (`frames`) share."""
