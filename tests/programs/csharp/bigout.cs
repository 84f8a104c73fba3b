// prints 100 MB
var stdout = Console.OpenStandardOutput();
var block = new byte[1 << 20];
Array.Fill(block, (byte)'x');
for (int i = 0; i < 100; i++)
    stdout.Write(block, 0, block.Length);
