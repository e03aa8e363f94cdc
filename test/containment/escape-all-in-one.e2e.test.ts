import { escapeSuite } from "./escape-suite.ts";

// S6 against the all-in-one: every service in one process, whose environment holds every secret.
escapeSuite("all-in-one");
