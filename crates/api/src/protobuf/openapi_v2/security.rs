//! Security requirements and schemes to gnostic messages.

use super::list;
use super::model::{NamedString, NamedStringArray, StringArray};
use super::model_paths::{
    ApiKeySecurity, BasicAuthenticationSecurity, NamedSecurityDefinitionsItem, OAuth2AccessCode,
    OAuth2Implicit, OAuth2TokenUrl, Oauth2Scopes, SecurityDefinitions, SecurityDefinitionsItem,
    SecurityRequirement, SecurityScheme,
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
            ("oauth2", "implicit") => SecurityScheme::Oauth2ImplicitSecurity(OAuth2Implicit {
                r#type,
                flow,
                scopes,
                authorization_url: at.string("authorizationUrl")?,
                description,
                vendor_extension,
            }),
            ("oauth2", "password" | "application") => {
                let is_password = flow == "password";
                let body = OAuth2TokenUrl {
                    r#type,
                    flow,
                    scopes,
                    token_url: at.string("tokenUrl")?,
                    description,
                    vendor_extension,
                };
                if is_password {
                    SecurityScheme::Oauth2PasswordSecurity(body)
                } else {
                    SecurityScheme::Oauth2ApplicationSecurity(body)
                }
            }
            ("oauth2", "accessCode") => {
                SecurityScheme::Oauth2AccessCodeSecurity(OAuth2AccessCode {
                    r#type,
                    flow,
                    scopes,
                    authorization_url: at.string("authorizationUrl")?,
                    token_url: at.string("tokenUrl")?,
                    description,
                    vendor_extension,
                })
            }
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
