# bench/: benchmark drivers and graph generators (not run by make check).
