import { escapeSuite } from "./escape-suite.ts";

// S6 against separate service processes and a smart-HTTP git host that wants a token.
escapeSuite("processes");
