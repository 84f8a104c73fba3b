class Crash
{
    static void Main()
    {
        throw new System.InvalidOperationException("no greeting today");
    }
}
