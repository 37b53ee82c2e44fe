"""The case file: its model (``schema``, with ``seed`` and ``checks``), its rules, director notes
(``notes``), credential templates, and the loader that reads and selects case files."""
