// prints 100 MB, then spins: a judge that waits for the end times out instead
var stdout = Console.OpenStandardOutput();
var block = new byte[1 << 20];
Array.Fill(block, (byte)'x');
for (int i = 0; i < 100; i++)
    stdout.Write(block, 0, block.Length);
stdout.Flush();
long n = 0;
while (true)
    n++;
