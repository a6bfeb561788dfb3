"""How a text or a text pair becomes model input, the same way in training and in scoring."""
