throw new Error("no greeting today");
