"""An instructor's decisions for one graded assignment, kept in `grading.toml` in the graded folder: the
late policy (rules.py reads it) and the adjustments of single grades, applied on top of the results
as graded (standing.py), so that grading again never loses them."""
