//! The admin's scope applied to a call before its tool starts (the rules are [`crate::scope`]'s): the
//! repository filled in when the scope names one, and a call naming one outside refused with one
//! sentence, before anything is read. The tools that narrow filter their own answers (`Call::scope`).

use serde_json::{Map, Value};

use crate::scope::{Scope, Scoped};
use crate::tool::{Exposed, ToolSpec};

/// The arguments a rule applies to, and the rule: a view's are those of its kind's tool (`show`'s own,
/// `refresh_view`'s nested `show`). `None` when a view names no kind this server offers (its tool then
/// answers so, reading nothing).
fn resolve<'m>(
    tool: &ToolSpec,
    exposed: &Exposed,
    args: &'m mut Map<String, Value>,
) -> Option<(Scoped, &'m mut Map<String, Value>)> {
    if tool.scope != Scoped::View {
        return Some((tool.scope, args));
    }
    let view = match args.contains_key("show") {
        true => args.get_mut("show")?.as_object_mut()?,
        false => args,
    };
    let kind = exposed.kind(view.get("kind").and_then(Value::as_str)?)?;
    let rule = exposed.get(kind.tool)?.scope;
    // A view's kind is a data tool's: a view of a view cannot be.
    (rule != Scoped::View).then_some((rule, view))
}

/// Fills in the repository where the rule takes one and the scope names exactly one.
pub(super) fn fill(tool: &ToolSpec, exposed: &Exposed, scope: &Scope, args: &mut Map<String, Value>) {
    let Some((rule, args)) = resolve(tool, exposed, args) else { return };
    let names_repository = args.contains_key("project") || args.contains_key("repo");
    match rule {
        Scoped::Repository => scope.fill(args),
        Scoped::RepositoryOrNarrowed if names_repository => scope.fill(args),
        Scoped::Commit if !args.contains_key("commit_id") => scope.fill(args),
        _ => {}
    }
}

/// Whether the call (its arguments checked and filled) stays in scope; `Err` is the sentence it answers.
pub(super) fn admit(
    tool: &ToolSpec,
    exposed: &Exposed,
    scope: &Scope,
    args: &Map<String, Value>,
) -> Result<(), String> {
    let mut args = args.clone();
    let Some((rule, args)) = resolve(tool, exposed, &mut args) else { return Ok(()) };
    let names_repository = args.contains_key("project") || args.contains_key("repo");
    match rule {
        Scoped::Repository => scope.check_repository(args, true),
        Scoped::RepositoryOrNarrowed if names_repository => scope.check_repository(args, true),
        Scoped::Commit if args.contains_key("commit_id") && !names_repository => Err(format!(
            "{} by commit_id alone reads every repository's builds of that commit, and this server's scope is {}: give project, repo and pr_id instead. Nothing was read.",
            tool.name,
            scope.words()
        )),
        Scoped::Commit => scope.check_repository(args, true),
        // Narrowed in the tool itself, which checks what it names; the rest touch no project.
        Scoped::RepositoryOrNarrowed | Scoped::Narrowed | Scoped::Session | Scoped::Unscoped | Scoped::View => Ok(()),
    }
}
