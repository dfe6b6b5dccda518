"""The published EMPATH instrument as a suites layer (``empath-gate import-empath``).

* :mod:`.pysource`: literal data out of Python source with :mod:`ast` (never imported or run);
* :mod:`.reader`: the seeds and personas of a checkout of the EMPATH benchmark repository;
* :mod:`.rewrite`: sentences addressed to upstream's tool-using auditor, removed or rewritten;
* :mod:`.convert`: upstream entries as this instrument's seeds and personas;
* :mod:`.layer`: the layer's files, licence, attribution and import report.
"""
