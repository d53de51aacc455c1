// The page's kind registry. Each view module registers the kind it draws, once, below its own
// definition (card.js registers pull_request with card.draw). The core's table (bb_core::views::KINDS)
// names the module of every kind; core/tests/kinds.rs holds the two to each other.
const KINDS = new Map();

function registerKind(name, draw) {
  if (typeof draw !== "function") throw new TypeError(`the kind ${name} has no renderer`);
  if (KINDS.has(name)) throw new Error(`the kind ${name} is registered twice`);
  KINDS.set(name, draw);
}
