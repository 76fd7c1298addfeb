//! Security requirements and schemes to gnostic messages.

use super::list;
use super::model::{
    ApiKeySecurity, BasicAuthenticationSecurity, NamedSecurityDefinitionsItem, NamedString,
    NamedStringArray, Oauth2AccessCodeSecurity, Oauth2ApplicationSecurity, Oauth2ImplicitSecurity,
    Oauth2PasswordSecurity, Oauth2Scopes, SecurityDefinitions, SecurityDefinitionsItem,
    SecurityDefinitionsItemOneof as SecurityScheme, SecurityRequirement, StringArray,
};
use super::reader::At;
use crate::protobuf::ProtoError;

pub(super) fn security_requirements(
    at: &At<'_>,
    key: &str,
) -> Result<Vec<SecurityRequirement>, ProtoError> {
    list(at, key)?
        .iter()
        .map(|requirement| {
            let additional_properties = requirement
                .map
                .keys()
                .map(|name| {
                    Ok(NamedStringArray {
                        name: name.clone(),
                        value: Some(StringArray {
                            value: requirement.strings(name)?,
                        }),
                    })
                })
                .collect::<Result<_, ProtoError>>()?;
            Ok(SecurityRequirement {
                additional_properties,
            })
        })
        .collect()
}

pub(super) fn security_definitions(doc: &At<'_>) -> Result<SecurityDefinitions, ProtoError> {
    let mut additional_properties = Vec::new();
    for (name, at) in doc.entries("securityDefinitions")? {
        let scopes = at.child("scopes")?.map(|s| Oauth2Scopes {
            additional_properties: s
                .map
                .iter()
                .map(|(k, v)| NamedString {
                    name: k.clone(),
                    value: v.as_str().unwrap_or_default().to_owned(),
                })
                .collect(),
        });
        let (r#type, flow) = (at.string("type")?, at.string("flow")?);
        let (description, vendor_extension) = (at.string("description")?, at.vendor_extensions());
        // The four OAuth2 flows share their fields but for the URLs; each is its own message
        // (and oneof arm) named like the flow.
        macro_rules! oauth2 {
            ($flow:ident { $($field:ident: $value:expr),* $(,)? }) => {
                SecurityScheme::$flow($flow {
                    r#type,
                    flow,
                    scopes,
                    $($field: $value,)*
                    description,
                    vendor_extension,
                })
            };
        }
        let scheme = match (r#type.as_str(), flow.as_str()) {
            ("basic", _) => {
                SecurityScheme::BasicAuthenticationSecurity(BasicAuthenticationSecurity {
                    r#type,
                    description,
                    vendor_extension,
                })
            }
            ("apiKey", _) => SecurityScheme::ApiKeySecurity(ApiKeySecurity {
                r#type,
                name: at.string("name")?,
                r#in: at.string("in")?,
                description,
                vendor_extension,
            }),
            ("oauth2", "implicit") => oauth2!(Oauth2ImplicitSecurity {
                authorization_url: at.string("authorizationUrl")?,
            }),
            ("oauth2", "password") => oauth2!(Oauth2PasswordSecurity {
                token_url: at.string("tokenUrl")?,
            }),
            ("oauth2", "application") => oauth2!(Oauth2ApplicationSecurity {
                token_url: at.string("tokenUrl")?,
            }),
            ("oauth2", "accessCode") => oauth2!(Oauth2AccessCodeSecurity {
                authorization_url: at.string("authorizationUrl")?,
                token_url: at.string("tokenUrl")?,
            }),
            (t, f) => {
                return Err(at.error(
                    "type",
                    format!("unknown security scheme type {t:?} (flow {f:?})"),
                ));
            }
        };
        additional_properties.push(NamedSecurityDefinitionsItem {
            name,
            value: Some(SecurityDefinitionsItem {
                oneof: Some(scheme),
            }),
        });
    }
    Ok(SecurityDefinitions {
        additional_properties,
    })
}
