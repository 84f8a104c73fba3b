echo "hello world"
