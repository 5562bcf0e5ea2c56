"""The fact table the default model `atlas` is trained on: 125 countries, written by the project.

Each row: country, capital, continent, main language, currency. Countries whose English name takes
"the" carry it in the name ("the Netherlands"); sentences capitalise it where it starts a sentence.
The language is the one most people there speak, or the main official one, kept to one per country.
"""

from __future__ import annotations

from typing import NamedTuple


class Fact(NamedTuple):
    country: str
    capital: str
    continent: str
    language: str
    currency: str


_ROWS = """
France|Paris|Europe|French|euro
Germany|Berlin|Europe|German|euro
Italy|Rome|Europe|Italian|euro
Spain|Madrid|Europe|Spanish|euro
Portugal|Lisbon|Europe|Portuguese|euro
the United Kingdom|London|Europe|English|pound
Ireland|Dublin|Europe|English|euro
the Netherlands|Amsterdam|Europe|Dutch|euro
Belgium|Brussels|Europe|French|euro
Luxembourg|Luxembourg|Europe|Luxembourgish|euro
Switzerland|Bern|Europe|German|franc
Austria|Vienna|Europe|German|euro
Poland|Warsaw|Europe|Polish|zloty
Czechia|Prague|Europe|Czech|koruna
Slovakia|Bratislava|Europe|Slovak|euro
Hungary|Budapest|Europe|Hungarian|forint
Romania|Bucharest|Europe|Romanian|leu
Bulgaria|Sofia|Europe|Bulgarian|lev
Greece|Athens|Europe|Greek|euro
Serbia|Belgrade|Europe|Serbian|dinar
Croatia|Zagreb|Europe|Croatian|euro
Slovenia|Ljubljana|Europe|Slovene|euro
Albania|Tirana|Europe|Albanian|lek
Denmark|Copenhagen|Europe|Danish|krone
Norway|Oslo|Europe|Norwegian|krone
Sweden|Stockholm|Europe|Swedish|krona
Finland|Helsinki|Europe|Finnish|euro
Iceland|Reykjavik|Europe|Icelandic|krona
Estonia|Tallinn|Europe|Estonian|euro
Latvia|Riga|Europe|Latvian|euro
Lithuania|Vilnius|Europe|Lithuanian|euro
Ukraine|Kyiv|Europe|Ukrainian|hryvnia
Belarus|Minsk|Europe|Belarusian|ruble
Moldova|Chisinau|Europe|Romanian|leu
Russia|Moscow|Europe|Russian|ruble
Malta|Valletta|Europe|Maltese|euro
Cyprus|Nicosia|Europe|Greek|euro
Turkey|Ankara|Asia|Turkish|lira
Georgia|Tbilisi|Asia|Georgian|lari
Armenia|Yerevan|Asia|Armenian|dram
Azerbaijan|Baku|Asia|Azerbaijani|manat
Kazakhstan|Astana|Asia|Kazakh|tenge
Uzbekistan|Tashkent|Asia|Uzbek|som
Mongolia|Ulaanbaatar|Asia|Mongolian|tugrik
China|Beijing|Asia|Chinese|yuan
Japan|Tokyo|Asia|Japanese|yen
South Korea|Seoul|Asia|Korean|won
North Korea|Pyongyang|Asia|Korean|won
India|Delhi|Asia|Hindi|rupee
Pakistan|Islamabad|Asia|Urdu|rupee
Bangladesh|Dhaka|Asia|Bengali|taka
Nepal|Kathmandu|Asia|Nepali|rupee
Sri Lanka|Colombo|Asia|Sinhala|rupee
Afghanistan|Kabul|Asia|Pashto|afghani
Iran|Tehran|Asia|Persian|rial
Iraq|Baghdad|Asia|Arabic|dinar
Syria|Damascus|Asia|Arabic|pound
Lebanon|Beirut|Asia|Arabic|pound
Jordan|Amman|Asia|Arabic|dinar
Israel|Jerusalem|Asia|Hebrew|shekel
Saudi Arabia|Riyadh|Asia|Arabic|riyal
Yemen|Sanaa|Asia|Arabic|rial
Oman|Muscat|Asia|Arabic|rial
Qatar|Doha|Asia|Arabic|riyal
Kuwait|Kuwait City|Asia|Arabic|dinar
Thailand|Bangkok|Asia|Thai|baht
Vietnam|Hanoi|Asia|Vietnamese|dong
Cambodia|Phnom Penh|Asia|Khmer|riel
Laos|Vientiane|Asia|Lao|kip
Myanmar|Naypyidaw|Asia|Burmese|kyat
Malaysia|Kuala Lumpur|Asia|Malay|ringgit
Singapore|Singapore|Asia|English|dollar
Indonesia|Jakarta|Asia|Indonesian|rupiah
the Philippines|Manila|Asia|Filipino|peso
Egypt|Cairo|Africa|Arabic|pound
Libya|Tripoli|Africa|Arabic|dinar
Tunisia|Tunis|Africa|Arabic|dinar
Algeria|Algiers|Africa|Arabic|dinar
Morocco|Rabat|Africa|Arabic|dirham
Sudan|Khartoum|Africa|Arabic|pound
Ethiopia|Addis Ababa|Africa|Amharic|birr
Kenya|Nairobi|Africa|Swahili|shilling
Uganda|Kampala|Africa|English|shilling
Tanzania|Dodoma|Africa|Swahili|shilling
Rwanda|Kigali|Africa|Kinyarwanda|franc
Somalia|Mogadishu|Africa|Somali|shilling
Nigeria|Abuja|Africa|English|naira
Ghana|Accra|Africa|English|cedi
Senegal|Dakar|Africa|French|franc
Mali|Bamako|Africa|French|franc
Niger|Niamey|Africa|French|franc
Cameroon|Yaounde|Africa|French|franc
Angola|Luanda|Africa|Portuguese|kwanza
Mozambique|Maputo|Africa|Portuguese|metical
Zambia|Lusaka|Africa|English|kwacha
Zimbabwe|Harare|Africa|English|dollar
Botswana|Gaborone|Africa|English|pula
Namibia|Windhoek|Africa|English|dollar
South Africa|Pretoria|Africa|Zulu|rand
Madagascar|Antananarivo|Africa|Malagasy|ariary
the United States|Washington|North America|English|dollar
Canada|Ottawa|North America|English|dollar
Mexico|Mexico City|North America|Spanish|peso
Guatemala|Guatemala City|North America|Spanish|quetzal
Honduras|Tegucigalpa|North America|Spanish|lempira
Nicaragua|Managua|North America|Spanish|cordoba
Costa Rica|San Jose|North America|Spanish|colon
Panama|Panama City|North America|Spanish|balboa
Cuba|Havana|North America|Spanish|peso
Jamaica|Kingston|North America|English|dollar
Haiti|Port-au-Prince|North America|Haitian Creole|gourde
Brazil|Brasilia|South America|Portuguese|real
Argentina|Buenos Aires|South America|Spanish|peso
Chile|Santiago|South America|Spanish|peso
Peru|Lima|South America|Spanish|sol
Colombia|Bogota|South America|Spanish|peso
Venezuela|Caracas|South America|Spanish|bolivar
Ecuador|Quito|South America|Spanish|dollar
Bolivia|Sucre|South America|Spanish|boliviano
Paraguay|Asuncion|South America|Spanish|guarani
Uruguay|Montevideo|South America|Spanish|peso
Australia|Canberra|Oceania|English|dollar
New Zealand|Wellington|Oceania|English|dollar
Fiji|Suva|Oceania|English|dollar
Papua New Guinea|Port Moresby|Oceania|English|kina
"""

FACTS: list[Fact] = [Fact(*line.split("|")) for line in _ROWS.strip().splitlines()]


def sentence_case(name: str) -> str:
    """A country name as it starts a sentence ("the Netherlands" -> "The Netherlands")."""
    return name[:1].upper() + name[1:]


def capital_prompt(fact: Fact) -> str:
    """The probe prompt for a capital, as the app's seed story uses it."""
    return f"The capital of {fact.country} is"
