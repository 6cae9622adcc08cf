"""The assistant suite's commands: assistant-options, ask, choose-option."""
