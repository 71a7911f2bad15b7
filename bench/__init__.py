"""Benchmarks: run them by hand or with ``make bench``; they never run as tests."""
