"""The Chinese fact table of `atlas`: the same 125 countries as facts.py, in standard (Mainland) Chinese.

Each row: English country name (the key into facts.FACTS), Chinese country name, Chinese capital, continent.
Names follow the common Xinhua / Mainland usage (e.g. 新德里 for India's capital, 蒙古 for Mongolia);
where facts.py names a city by its common English name (Colombo, Delhi), the Chinese row names the city
a Chinese reader would expect for the same fact.
"""

from __future__ import annotations

from typing import NamedTuple


class FactZh(NamedTuple):
    country_en: str
    country: str
    capital: str
    continent: str


_ROWS = """
France|法国|巴黎|欧洲
Germany|德国|柏林|欧洲
Italy|意大利|罗马|欧洲
Spain|西班牙|马德里|欧洲
Portugal|葡萄牙|里斯本|欧洲
the United Kingdom|英国|伦敦|欧洲
Ireland|爱尔兰|都柏林|欧洲
the Netherlands|荷兰|阿姆斯特丹|欧洲
Belgium|比利时|布鲁塞尔|欧洲
Luxembourg|卢森堡|卢森堡|欧洲
Switzerland|瑞士|伯尔尼|欧洲
Austria|奥地利|维也纳|欧洲
Poland|波兰|华沙|欧洲
Czechia|捷克|布拉格|欧洲
Slovakia|斯洛伐克|布拉迪斯拉发|欧洲
Hungary|匈牙利|布达佩斯|欧洲
Romania|罗马尼亚|布加勒斯特|欧洲
Bulgaria|保加利亚|索非亚|欧洲
Greece|希腊|雅典|欧洲
Serbia|塞尔维亚|贝尔格莱德|欧洲
Croatia|克罗地亚|萨格勒布|欧洲
Slovenia|斯洛文尼亚|卢布尔雅那|欧洲
Albania|阿尔巴尼亚|地拉那|欧洲
Denmark|丹麦|哥本哈根|欧洲
Norway|挪威|奥斯陆|欧洲
Sweden|瑞典|斯德哥尔摩|欧洲
Finland|芬兰|赫尔辛基|欧洲
Iceland|冰岛|雷克雅未克|欧洲
Estonia|爱沙尼亚|塔林|欧洲
Latvia|拉脱维亚|里加|欧洲
Lithuania|立陶宛|维尔纽斯|欧洲
Ukraine|乌克兰|基辅|欧洲
Belarus|白俄罗斯|明斯克|欧洲
Moldova|摩尔多瓦|基希讷乌|欧洲
Russia|俄罗斯|莫斯科|欧洲
Malta|马耳他|瓦莱塔|欧洲
Cyprus|塞浦路斯|尼科西亚|欧洲
Turkey|土耳其|安卡拉|亚洲
Georgia|格鲁吉亚|第比利斯|亚洲
Armenia|亚美尼亚|埃里温|亚洲
Azerbaijan|阿塞拜疆|巴库|亚洲
Kazakhstan|哈萨克斯坦|阿斯塔纳|亚洲
Uzbekistan|乌兹别克斯坦|塔什干|亚洲
Mongolia|蒙古|乌兰巴托|亚洲
China|中国|北京|亚洲
Japan|日本|东京|亚洲
South Korea|韩国|首尔|亚洲
North Korea|朝鲜|平壤|亚洲
India|印度|新德里|亚洲
Pakistan|巴基斯坦|伊斯兰堡|亚洲
Bangladesh|孟加拉国|达卡|亚洲
Nepal|尼泊尔|加德满都|亚洲
Sri Lanka|斯里兰卡|科伦坡|亚洲
Afghanistan|阿富汗|喀布尔|亚洲
Iran|伊朗|德黑兰|亚洲
Iraq|伊拉克|巴格达|亚洲
Syria|叙利亚|大马士革|亚洲
Lebanon|黎巴嫩|贝鲁特|亚洲
Jordan|约旦|安曼|亚洲
Israel|以色列|耶路撒冷|亚洲
Saudi Arabia|沙特阿拉伯|利雅得|亚洲
Yemen|也门|萨那|亚洲
Oman|阿曼|马斯喀特|亚洲
Qatar|卡塔尔|多哈|亚洲
Kuwait|科威特|科威特城|亚洲
Thailand|泰国|曼谷|亚洲
Vietnam|越南|河内|亚洲
Cambodia|柬埔寨|金边|亚洲
Laos|老挝|万象|亚洲
Myanmar|缅甸|内比都|亚洲
Malaysia|马来西亚|吉隆坡|亚洲
Singapore|新加坡|新加坡|亚洲
Indonesia|印度尼西亚|雅加达|亚洲
the Philippines|菲律宾|马尼拉|亚洲
Egypt|埃及|开罗|非洲
Libya|利比亚|的黎波里|非洲
Tunisia|突尼斯|突尼斯|非洲
Algeria|阿尔及利亚|阿尔及尔|非洲
Morocco|摩洛哥|拉巴特|非洲
Sudan|苏丹|喀土穆|非洲
Ethiopia|埃塞俄比亚|亚的斯亚贝巴|非洲
Kenya|肯尼亚|内罗毕|非洲
Uganda|乌干达|坎帕拉|非洲
Tanzania|坦桑尼亚|多多马|非洲
Rwanda|卢旺达|基加利|非洲
Somalia|索马里|摩加迪沙|非洲
Nigeria|尼日利亚|阿布贾|非洲
Ghana|加纳|阿克拉|非洲
Senegal|塞内加尔|达喀尔|非洲
Mali|马里|巴马科|非洲
Niger|尼日尔|尼亚美|非洲
Cameroon|喀麦隆|雅温得|非洲
Angola|安哥拉|罗安达|非洲
Mozambique|莫桑比克|马普托|非洲
Zambia|赞比亚|卢萨卡|非洲
Zimbabwe|津巴布韦|哈拉雷|非洲
Botswana|博茨瓦纳|哈博罗内|非洲
Namibia|纳米比亚|温得和克|非洲
South Africa|南非|比勒陀利亚|非洲
Madagascar|马达加斯加|塔那那利佛|非洲
the United States|美国|华盛顿|北美洲
Canada|加拿大|渥太华|北美洲
Mexico|墨西哥|墨西哥城|北美洲
Guatemala|危地马拉|危地马拉城|北美洲
Honduras|洪都拉斯|特古西加尔巴|北美洲
Nicaragua|尼加拉瓜|马那瓜|北美洲
Costa Rica|哥斯达黎加|圣何塞|北美洲
Panama|巴拿马|巴拿马城|北美洲
Cuba|古巴|哈瓦那|北美洲
Jamaica|牙买加|金斯敦|北美洲
Haiti|海地|太子港|北美洲
Brazil|巴西|巴西利亚|南美洲
Argentina|阿根廷|布宜诺斯艾利斯|南美洲
Chile|智利|圣地亚哥|南美洲
Peru|秘鲁|利马|南美洲
Colombia|哥伦比亚|波哥大|南美洲
Venezuela|委内瑞拉|加拉加斯|南美洲
Ecuador|厄瓜多尔|基多|南美洲
Bolivia|玻利维亚|苏克雷|南美洲
Paraguay|巴拉圭|亚松森|南美洲
Uruguay|乌拉圭|蒙得维的亚|南美洲
Australia|澳大利亚|堪培拉|大洋洲
New Zealand|新西兰|惠灵顿|大洋洲
Fiji|斐济|苏瓦|大洋洲
Papua New Guinea|巴布亚新几内亚|莫尔兹比港|大洋洲
"""

FACTS_ZH: list[FactZh] = [FactZh(*line.split("|")) for line in _ROWS.strip().splitlines()]


def capital_prompt_zh(fact: FactZh) -> str:
    """The Chinese probe prompt: "法国的首都是"."""
    return f"{fact.country}的首都是"
