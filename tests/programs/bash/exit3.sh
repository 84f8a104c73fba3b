echo "about to exit with 3"
exit 3
