// Exits without a guess: the validator reads EOF.
int main()
{
	return 0;
}
