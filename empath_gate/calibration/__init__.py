"""How far the judge can be trusted: the judge-validity study tools, apart from the gate.

The gate's own statistics (cells, regressions, test-retest reliability of the target) live in
:mod:`empath_gate.analysis`. This package measures the *judge*:

* :mod:`~empath_gate.calibration.agreement`: agreement between two scorings of the same items
  (two judges, a judge with itself, or a judge and a person);
* :mod:`~empath_gate.calibration.calibrate`: the judge against gold labels, and the standard
  rubric against the strict one;
* :mod:`~empath_gate.calibration.readers` and :mod:`~empath_gate.calibration.preferences`: the
  files these work on (gold labels, results files, paired scores, standard-vs-strict rows,
  preference CSVs), the only file input here;
* :mod:`~empath_gate.calibration.pairing`: which scorings of the same items are compared;
* :mod:`~empath_gate.calibration.categorical`: Gwet's AC1 on preferences;
* :mod:`~empath_gate.calibration.studies`: each study from its input files, and
  :mod:`~empath_gate.calibration.render` its text and JSON;
* :mod:`~empath_gate.calibration.status`: the judge's calibration status file, and what a
  results file says about it (``metadata.judge.calibration``).

The ``calibrate`` and ``agreement`` commands (:mod:`empath_gate.commands`) parse arguments, call
these and print.
"""
