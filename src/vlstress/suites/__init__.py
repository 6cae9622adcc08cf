"""The suites: one package each (stages, params block, computations, records, tables, figures).
The list of them is `vlstress.suites.registry`."""
