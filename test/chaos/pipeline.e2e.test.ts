import { chaosSuite } from "./chaos-suite.ts";

chaosSuite("pipeline");
