# copies stdin to stdout, line by line, bytes kept
while IFS= read -r line || [ -n "$line" ]; do
	printf '%s\n' "$line"
done
