#include "validate.h"
int main() { return 42; }
