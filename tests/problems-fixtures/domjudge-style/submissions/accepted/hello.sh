#!/bin/sh
# A POSIX shell submission (DOMjudge's language list has .sh and .bash).
# @EXPECTED_RESULTS@: CORRECT
read name
echo "hello $name"
