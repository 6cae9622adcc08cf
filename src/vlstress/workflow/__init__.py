"""The workflow as declarations: what a stage and a suite are (`spec`), where things are kept
(`paths`), and the engine's own stages (`stages`). Light on purpose: a step's code may read the
paths without depending on the stage table, which `vlstress.pipeline` assembles from the suites."""
