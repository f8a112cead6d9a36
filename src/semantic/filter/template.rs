//! MetricFlow's Jinja references in a filter (`{{ Dimension('customer__segment') }} = 'new'`):
//! each `{{ … }}` parsed as a call (`Dimension`, `TimeDimension`, `Entity`, `Metric`, with
//! string arguments and methods such as `.grain('month')`) and replaced by what the caller
//! resolves it to. Anything else between braces, and any other Jinja, is refused: sqb renders
//! no Jinja.

/// `Dimension('a__b')`, `TimeDimension('a__b', 'month')`, `Entity('a')`, with methods.
#[derive(Debug, PartialEq, Eq)]
pub struct Call {
    pub function: String,
    pub args: Vec<String>,
    /// A `Metric`'s entities: `group_by=['customer']`, or a list as its second argument.
    pub group_by: Vec<String>,
    pub methods: Vec<(String, Vec<String>)>,
}

impl Call {
    /// The call as written inside the braces, or `None` when it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let mut p = Parser { rest: text };
        let function = p.ident()?;
        let (args, group_by) = p.call_args()?;
        let mut methods = Vec::new();
        while p.eat('.') {
            let name = p.ident()?;
            methods.push((name, p.args()?));
        }
        p.rest.trim().is_empty().then_some(Self {
            function,
            args,
            group_by,
            methods,
        })
    }

    /// `Function('a', 'b')`, for messages.
    pub fn shown(&self) -> String {
        let args: Vec<String> = self.args.iter().map(|a| format!("'{a}'")).collect();
        format!("{}({})", self.function, args.join(", "))
    }
}

/// Replaces every `{{ … }}` of `template` by what `resolve` makes of its call.
pub fn substitute(
    template: &str,
    mut resolve: impl FnMut(&Call) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("`{template}` opens `{{{{` without closing it"))?;
        let call = Call::parse(after[..end].trim()).ok_or_else(|| {
            format!(
                "`{{{{ {} }}}}` is not a reference sqb reads",
                after[..end].trim()
            )
        })?;
        out.push_str(&resolve(&call)?);
        rest = &after[end + 2..];
    }
    if rest.contains("}}") || rest.contains("{%") {
        return Err(format!("`{template}` holds Jinja sqb does not read"));
    }
    out.push_str(rest);
    Ok(out)
}

struct Parser<'t> {
    rest: &'t str,
}

impl Parser<'_> {
    fn eat(&mut self, c: char) -> bool {
        self.rest = self.rest.trim_start();
        match self.rest.strip_prefix(c) {
            Some(r) => {
                self.rest = r;
                true
            }
            None => false,
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.rest = self.rest.trim_start();
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.rest.len());
        let (ident, rest) = self.rest.split_at(end);
        self.rest = rest;
        (!ident.is_empty()).then(|| ident.to_string())
    }

    /// A call's arguments: strings, then at most one list of strings, bare or as
    /// `group_by=[…]`.
    fn call_args(&mut self) -> Option<(Vec<String>, Vec<String>)> {
        if !self.eat('(') {
            return None;
        }
        let mut args = Vec::new();
        let mut list = None;
        loop {
            if self.eat(')') {
                return Some((args, list.unwrap_or_default()));
            }
            if (!args.is_empty() || list.is_some()) && !self.eat(',') {
                return None;
            }
            let before = self.rest;
            if self.ident().as_deref() == Some("group_by") && self.eat('=') {
                list = Some(self.list()?);
                continue;
            }
            self.rest = before;
            if self.rest.trim_start().starts_with('[') {
                list = Some(self.list()?);
                continue;
            }
            if list.is_some() {
                return None;
            }
            args.push(self.string()?);
        }
    }

    /// `[ 'a', "b" ]`.
    fn list(&mut self) -> Option<Vec<String>> {
        self.strings('[', ']')
    }

    /// Strings between `open` and `close`, comma-separated (a trailing comma allowed).
    fn strings(&mut self, open: char, close: char) -> Option<Vec<String>> {
        if !self.eat(open) {
            return None;
        }
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Some(items);
            }
            if !items.is_empty() && !self.eat(',') {
                return None;
            }
            if self.eat(close) {
                return Some(items);
            }
            items.push(self.string()?);
        }
    }

    /// One quoted string.
    fn string(&mut self) -> Option<String> {
        self.rest = self.rest.trim_start();
        let quote = self
            .rest
            .chars()
            .next()
            .filter(|c| *c == '\'' || *c == '"')?;
        let body = &self.rest[1..];
        let end = body.find(quote)?;
        let out = body[..end].to_string();
        self.rest = &body[end + 1..];
        Some(out)
    }

    /// `( 'a', "b" )`: string arguments only.
    fn args(&mut self) -> Option<Vec<String>> {
        self.strings('(', ')')
    }
}

/// A bare name (`customer__segment`): ASCII letters, digits and underscores.
fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A MetricFlow reference in a query filter, as the dimension name sqb resolves (MetricFlow's
/// spelling, `customer__segment`, `ordered_at__month`): `Dimension`, `TimeDimension` with or
/// without a grain; `Entity('customer')` is the dimension of the entity's name (the import
/// writes one for each entity); `Metric('m', group_by=['customer'])` is `metric(m, customer)`.
pub fn query_reference(call: &Call) -> Result<String, String> {
    let mut grain = None;
    for (method, args) in &call.methods {
        match (method.as_str(), args.as_slice()) {
            ("grain", [g]) if matches!(call.function.as_str(), "Dimension" | "TimeDimension") => {
                grain = Some(g.clone());
            }
            _ => {
                return Err(format!(
                    "`{}` calls `.{method}`, which sqb does not read",
                    call.shown()
                ))
            }
        }
    }
    let name = match (call.function.as_str(), call.args.as_slice()) {
        ("Dimension" | "TimeDimension", [name]) => name.clone(),
        ("TimeDimension", [name, g]) if grain.is_none() => {
            grain = Some(g.clone());
            name.clone()
        }
        // An entity's key, as the dimension of the entity's name (`sqb import dbt` writes one
        // for each entity).
        ("Entity", [name]) if grain.is_none() => name.clone(),
        ("Entity", _) => {
            return Err(format!(
                "`{}` is not an entity's key sqb reads, which it reads as `Entity('name')`",
                call.shown()
            ))
        }
        ("Metric", [metric]) if call.methods.is_empty() => {
            return match call.group_by.as_slice() {
                [entity] if is_name(metric) && is_name(entity) => Ok(format!("metric({metric}, {entity})")),
                [_] => Err(format!("`{}` names no metric sqb can read", call.shown())),
                _ => Err(format!(
                    "`{}` groups the metric by {} entities; sqb reads a metric's value for one entity (`group_by=['customer']`)",
                    call.shown(),
                    call.group_by.len()
                )),
            };
        }
        ("Metric", _) => {
            return Err(format!(
                "`{}` is not a metric's value for an entity, which sqb reads as `Metric('name', group_by=['entity'])`",
                call.shown()
            ))
        }
        _ => return Err(format!("`{}` is not a reference sqb reads", call.shown())),
    };
    if !is_name(&name) || grain.as_deref().is_some_and(|g| !is_name(g)) {
        return Err(format!(
            "`{}` names no dimension sqb can read",
            call.shown()
        ));
    }
    Ok(match grain {
        Some(g) => format!("{name}__{g}"),
        None => name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> Result<String, String> {
        substitute(text, query_reference)
    }

    #[test]
    fn calls_parse_with_their_methods() {
        let call = Call::parse("TimeDimension('metric_time', \"month\").grain('day')").unwrap();
        assert_eq!(call.function, "TimeDimension");
        assert_eq!(call.args, ["metric_time", "month"]);
        assert_eq!(
            call.methods,
            [("grain".to_string(), vec!["day".to_string()])]
        );
        assert!(Call::parse("Dimension('a') extra").is_none());
        assert!(Call::parse("Dimension(a)").is_none());
        let metric = Call::parse("Metric('m', group_by=['x'])").unwrap();
        assert_eq!(
            (metric.args, metric.group_by),
            (vec!["m".into()], vec!["x".into()])
        );
        let listed = Call::parse("Metric(\"m\", ['x', 'y',])").unwrap();
        assert_eq!(listed.group_by, ["x", "y"]);
        assert!(Call::parse("Metric('m', group_by=['x'], 'n')").is_none());
        assert!(Call::parse("Metric('m', group_by='x')").is_none());
    }

    #[test]
    fn references_become_dimension_names() {
        assert_eq!(
            query("{{ Dimension('customer__segment') }} = 'new'").unwrap(),
            "customer__segment = 'new'"
        );
        assert_eq!(
            query("{{ TimeDimension('order_id__ordered_at', 'month') }} >= '2026-04-01'").unwrap(),
            "order_id__ordered_at__month >= '2026-04-01'"
        );
        assert_eq!(
            query("{{Dimension(\"ordered_at\").grain('day')}} IS NOT NULL").unwrap(),
            "ordered_at__day IS NOT NULL"
        );
        assert_eq!(query("status = 'placed'").unwrap(), "status = 'placed'");
        assert_eq!(
            query("{{ Entity('order_id__customer') }} = 3").unwrap(),
            "order_id__customer = 3"
        );
        assert_eq!(
            query("{{ Metric('order_count', group_by=['customer']) }} > 2").unwrap(),
            "metric(order_count, customer) > 2"
        );
    }

    #[test]
    fn what_a_query_filter_cannot_say_is_refused() {
        for (text, why) in [
            ("{{ Entity('customer', 'x') }} = 3", "an entity's key"),
            (
                "{{ Metric('revenue', ['customer', 'order_id']) }} > 3",
                "by 2 entities",
            ),
            ("{{ Metric('revenue') }} > 3", "by 0 entities"),
            ("{{ Metric('a b', ['customer']) }} > 3", "names no metric"),
            (
                "{{ Metric('revenue', ['customer']).grain('day') }} > 3",
                "calls `.grain`",
            ),
            ("{{ Dimension('a').descending('x') }}", "`.descending`"),
            ("{{ Dimension('a b') }} = 1", "names no dimension"),
            ("{{ Dimension('a') = 1", "without closing"),
            ("{% if x %}1{% endif %}", "Jinja"),
            ("{{ var('x') }} = 1", "not a reference"),
        ] {
            let err = query(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
