"""How a text or a text pair becomes model input, the same way in training and in scoring.

- :mod:`~learned_metrics.text.sentences`: sentence splitters and the joiner (recorded in the card).
- :mod:`~learned_metrics.text.encoding`: tokenization with truncation (premise only for pairs) and
  the smallest usable ``max_length``.
"""
