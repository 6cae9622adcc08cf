"""Text stress-tests: word splitting/editing (`words`) and embedding-influence scores (`ei`)."""
