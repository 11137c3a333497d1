#!/bin/sh
# Stands in for the Check suites when configure did not find Check.
echo "FAIL: the test suites need Check: apt-get install check, then rerun configure"
exit 1
