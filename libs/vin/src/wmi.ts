// World manufacturer identifiers (VIN positions 1–3) shipped with the service: WMI|manufacturer|make.
// Compiled from the publicly posted NHTSA vPIC / ISO 3780 assignments for the makes most seen on US roads.
// A WMI ending in 9 marks a small maker whose identity continues in positions 12–14; those are not listed.
const ROWS = `
1HG|Honda of America Mfg.|Honda
1HF|Honda of America Mfg. (motorcycles)|Honda
19X|Honda of America Mfg.|Honda
19U|Honda of America Mfg.|Acura
2HG|Honda of Canada Mfg.|Honda
2HK|Honda of Canada Mfg.|Honda
2HJ|Honda of Canada Mfg.|Honda
2HN|Honda of Canada Mfg.|Acura
5FN|Honda Manufacturing of Alabama|Honda
5J6|Honda of America Mfg.|Honda
5J8|Honda of America Mfg.|Acura
JHM|Honda Motor Co.|Honda
JH2|Honda Motor Co. (motorcycles)|Honda
JH4|Honda Motor Co.|Acura
SHH|Honda UK Manufacturing|Honda
SHS|Honda UK Manufacturing|Honda
1M8|Motor Coach Industries|MCI
2M9|Motor Coach Industries (Canada)|MCI
1B3|Chrysler Corporation|Dodge
1B4|Chrysler Corporation|Dodge
1B7|Chrysler Corporation|Dodge
2B3|Chrysler Canada|Dodge
2B4|Chrysler Canada|Dodge
2B7|Chrysler Canada|Dodge
1D3|Chrysler (DaimlerChrysler)|Dodge
1D4|Chrysler (DaimlerChrysler)|Dodge
1D7|Chrysler (DaimlerChrysler)|Dodge
2D3|Chrysler Canada|Dodge
2D4|Chrysler Canada|Dodge
3D4|Chrysler de Mexico|Dodge
3D7|Chrysler de Mexico|Ram
2C3|FCA Canada|Chrysler
2C4|FCA Canada|Chrysler
1C3|FCA US|Chrysler
1C4|FCA US|Chrysler / Jeep / Dodge
1C6|FCA US|Ram
3C4|FCA Mexico|Chrysler
3C6|FCA Mexico|Ram
1J4|Chrysler Corporation|Jeep
1J8|Chrysler Corporation|Jeep
1P3|Chrysler Corporation|Plymouth
KM8|Hyundai Motor Company|Hyundai
KMH|Hyundai Motor Company|Hyundai
KMF|Hyundai Motor Company (commercial)|Hyundai
5NP|Hyundai Motor Manufacturing Alabama|Hyundai
5NM|Hyundai Motor Manufacturing Alabama|Hyundai
KNA|Kia Motors|Kia
KND|Kia Motors|Kia
KNM|Renault Samsung Motors|Renault Samsung
5XY|Kia Motors Manufacturing Georgia|Kia
5XX|Kia Motors Manufacturing Georgia|Kia
KL1|GM Daewoo|Chevrolet
KL4|GM Korea|Buick
KL7|GM Daewoo|Chevrolet
1FA|Ford Motor Company|Ford
1FB|Ford Motor Company|Ford
1FC|Ford Motor Company|Ford
1FD|Ford Motor Company|Ford
1FM|Ford Motor Company|Ford
1FT|Ford Motor Company|Ford
1FU|Freightliner|Freightliner
1FV|Freightliner|Freightliner
2FA|Ford Motor Company of Canada|Ford
2FM|Ford Motor Company of Canada|Ford
2FT|Ford Motor Company of Canada|Ford
3FA|Ford Motor Company (Mexico)|Ford
3FE|Ford Motor Company (Mexico)|Ford
3FM|Ford Motor Company (Mexico)|Ford
1LN|Ford Motor Company|Lincoln
5LM|Ford Motor Company|Lincoln
1ME|Ford Motor Company|Mercury
NM0|Ford Otosan|Ford
WF0|Ford Germany|Ford
SFA|Ford UK|Ford
1G1|General Motors|Chevrolet
1G4|General Motors|Buick
1G6|General Motors|Cadillac
1GC|General Motors|Chevrolet (truck)
1GT|General Motors|GMC (truck)
1GN|General Motors|Chevrolet (SUV)
1GK|General Motors|GMC (SUV)
1GY|General Motors|Cadillac
1G2|General Motors|Pontiac
1G3|General Motors|Oldsmobile
1G8|General Motors|Saturn
1GB|General Motors|Chevrolet (incomplete)
1GD|General Motors|GMC (incomplete)
2G1|General Motors of Canada|Chevrolet
2G4|General Motors of Canada|Buick
2GN|General Motors of Canada|Chevrolet
2GT|General Motors of Canada|GMC
3G1|General Motors de Mexico|Chevrolet
3GN|General Motors de Mexico|Chevrolet
3GC|General Motors de Mexico|Chevrolet
3GT|General Motors de Mexico|GMC
1GM|General Motors|Pontiac
JTD|Toyota Motor Corporation|Toyota
JTE|Toyota Motor Corporation|Toyota
JTH|Toyota Motor Corporation|Lexus
JTJ|Toyota Motor Corporation|Lexus
JTK|Toyota Motor Corporation|Toyota (Scion)
JTL|Toyota Motor Corporation|Toyota (Scion)
JTM|Toyota Motor Corporation|Toyota
JTN|Toyota Motor Corporation|Toyota
JT2|Toyota Motor Corporation|Toyota
JT3|Toyota Motor Corporation|Toyota
JT4|Toyota Motor Corporation|Toyota
JT6|Toyota Motor Corporation|Lexus
JT8|Toyota Motor Corporation|Lexus
4T1|Toyota Motor Manufacturing Kentucky|Toyota
4T3|Toyota Motor Manufacturing Kentucky|Toyota
4T4|Subaru of Indiana (Toyota)|Toyota
5TD|Toyota Motor Manufacturing Indiana|Toyota
5TF|Toyota Motor Manufacturing Texas|Toyota
5TE|Toyota Motor Manufacturing|Toyota
2T1|Toyota Motor Manufacturing Canada|Toyota
2T2|Toyota Motor Manufacturing Canada|Lexus
2T3|Toyota Motor Manufacturing Canada|Toyota
3TM|Toyota Motor Manufacturing de Baja California|Toyota
SB1|Toyota Motor Manufacturing UK|Toyota
NMT|Toyota Motor Manufacturing Turkey|Toyota
VNK|Toyota Motor Manufacturing France|Toyota
WVW|Volkswagen AG|Volkswagen
WV1|Volkswagen AG (commercial)|Volkswagen
WV2|Volkswagen AG (bus/van)|Volkswagen
WVG|Volkswagen AG (SUV)|Volkswagen
1VW|Volkswagen of America|Volkswagen
3VW|Volkswagen de Mexico|Volkswagen
3VV|Volkswagen de Mexico|Volkswagen
9BW|Volkswagen do Brasil|Volkswagen
WAU|Audi AG|Audi
WA1|Audi AG (SUV)|Audi
TRU|Audi Hungaria|Audi
WUA|quattro GmbH|Audi
WBA|BMW AG|BMW
WBS|BMW M GmbH|BMW
WBX|BMW AG (SUV)|BMW
WBY|BMW AG (i)|BMW
WB1|BMW Motorrad|BMW
4US|BMW Manufacturing (South Carolina)|BMW
5UX|BMW Manufacturing (South Carolina)|BMW
5YM|BMW M (South Carolina)|BMW
WMW|BMW AG|MINI
WDB|Daimler-Benz|Mercedes-Benz
WDC|DaimlerChrysler (SUV)|Mercedes-Benz
WDD|Daimler AG|Mercedes-Benz
WDF|Daimler AG (van)|Mercedes-Benz
W1K|Mercedes-Benz AG|Mercedes-Benz
W1N|Mercedes-Benz AG (SUV)|Mercedes-Benz
W1V|Mercedes-Benz AG (van)|Mercedes-Benz
4JG|Mercedes-Benz US International|Mercedes-Benz
55S|Mercedes-Benz US International|Mercedes-Benz
WP0|Dr. Ing. h.c. F. Porsche AG|Porsche
WP1|Porsche AG (SUV)|Porsche
WME|Daimler AG|smart
ZFF|Ferrari S.p.A.|Ferrari
ZHW|Automobili Lamborghini|Lamborghini
ZAM|Maserati S.p.A.|Maserati
ZAR|Alfa Romeo|Alfa Romeo
ZFA|Fiat Auto|Fiat
ZAC|FCA Italy|Jeep
3C3|FCA Mexico|Fiat
SAJ|Jaguar Cars|Jaguar
SAL|Land Rover|Land Rover
SAR|Rover Group|Rover
SCC|Lotus Cars|Lotus
SCF|Aston Martin Lagonda|Aston Martin
SCB|Bentley Motors|Bentley
SCA|Rolls-Royce Motor Cars|Rolls-Royce
SBM|McLaren Automotive|McLaren
YV1|Volvo Car Corporation|Volvo
YV4|Volvo Car Corporation (SUV)|Volvo
7JR|Volvo Car USA|Volvo
LYV|Volvo Cars (Daqing/Chengdu)|Volvo
4V4|Volvo Trucks North America|Volvo
YS3|Saab Automobile|Saab
VF1|Renault S.A.|Renault
VF3|Peugeot S.A.|Peugeot
VF7|Citroën|Citroën
VR3|Peugeot (PSA)|Peugeot
VSS|SEAT S.A.|SEAT
TMB|Škoda Auto|Škoda
UU1|Automobile Dacia|Dacia
JN1|Nissan Motor Co.|Nissan
JN8|Nissan Motor Co. (SUV)|Nissan
JNK|Nissan Motor Co.|Infiniti
JNR|Nissan Motor Co. (SUV)|Infiniti
1N4|Nissan North America|Nissan
1N6|Nissan North America (truck)|Nissan
5N1|Nissan North America (SUV)|Nissan
3N1|Nissan Mexicana|Nissan
3N6|Nissan Mexicana|Nissan
SJN|Nissan Motor Manufacturing UK|Nissan
JM1|Mazda Motor Corporation|Mazda
JM3|Mazda Motor Corporation (SUV)|Mazda
JMZ|Mazda Motor Corporation (Europe)|Mazda
3MZ|Mazda de Mexico|Mazda
3MV|Mazda de Mexico|Mazda
1YV|Mazda (AutoAlliance International)|Mazda
JF1|Fuji Heavy Industries|Subaru
JF2|Fuji Heavy Industries (SUV)|Subaru
4S3|Subaru of Indiana Automotive|Subaru
4S4|Subaru of Indiana Automotive|Subaru
JA3|Mitsubishi Motors|Mitsubishi
JA4|Mitsubishi Motors (SUV)|Mitsubishi
ML3|Mitsubishi Motors Thailand|Mitsubishi
4A3|Mitsubishi Motors Manufacturing of America|Mitsubishi
JS1|Suzuki Motor Corporation (motorcycles)|Suzuki
JS2|Suzuki Motor Corporation|Suzuki
JS3|Suzuki Motor Corporation|Suzuki
JYA|Yamaha Motor|Yamaha
JKA|Kawasaki Heavy Industries|Kawasaki
5YJ|Tesla, Inc.|Tesla
7SA|Tesla, Inc.|Tesla
LRW|Tesla Shanghai|Tesla
XP7|Tesla Berlin|Tesla
7G2|Tesla, Inc. (Cybertruck)|Tesla
5UP|Lucid Group|Lucid
7FC|Rivian Automotive|Rivian
50E|Lucid USA|Lucid
1HD|Harley-Davidson Motor Company|Harley-Davidson
5HD|Harley-Davidson Motor Company|Harley-Davidson
1GG|Isuzu (GM)|Isuzu
JAA|Isuzu Motors|Isuzu
JAL|Isuzu Motors (commercial)|Isuzu
1XK|Kenworth Truck Company|Kenworth
1XP|Peterbilt Motors|Peterbilt
2NP|Peterbilt (Canada)|Peterbilt
1M1|Mack Trucks|Mack
1M2|Mack Trucks|Mack
1HT|International (Navistar)|International
3HS|International (Navistar Mexico)|International
4V1|Volvo GM Heavy Truck|Volvo
1BA|Blue Bird Corporation|Blue Bird
4DR|IC Bus|IC Bus
2FZ|Sterling Trucks|Sterling
5PV|Hino Motors Manufacturing USA|Hino
JHB|Hino Motors|Hino
4UZ|Freightliner Custom Chassis|Freightliner
1N9|Nova Bus|Nova Bus
2NV|Nova Bus (Canada)|Nova Bus
1TU|Transportation Manufacturing Corp|TMC
5FY|New Flyer of America|New Flyer
2FY|New Flyer Industries|New Flyer
4RK|Nova Bus (US)|Nova Bus
1NX|NUMMI (Toyota)|Toyota
5L1|Ford Motor Company|Lincoln
2LM|Ford Motor Company of Canada|Lincoln
LSV|SAIC Volkswagen|Volkswagen
LFV|FAW-Volkswagen|Volkswagen
LBV|BMW Brilliance|BMW
LE4|Beijing Benz|Mercedes-Benz
LHG|Guangqi Honda|Honda
LVS|Changan Ford|Ford
LVG|GAC Toyota|Toyota
LC0|BYD Auto|BYD
LGX|BYD Auto|BYD
LSG|SAIC General Motors|Buick / Chevrolet
L6T|Geely Automobile|Geely
LB3|Geely Automobile|Geely
LPS|Polestar|Polestar
YSM|Polestar Performance|Polestar
MA1|Mahindra & Mahindra|Mahindra
MA3|Maruti Suzuki India|Suzuki
MAL|Hyundai Motor India|Hyundai
MAT|Tata Motors|Tata
MBH|Suzuki (India)|Suzuki
MR0|Toyota Motor Thailand|Toyota
MNB|Ford Thailand|Ford
MHF|Toyota Astra Motor|Toyota
PL1|Proton|Proton
KPT|SsangYong Motor|SsangYong
8AP|Fiat Argentina|Fiat
8AF|Ford Argentina|Ford
8AG|General Motors Argentina|Chevrolet
93H|Honda Brazil|Honda
9BG|General Motors do Brasil|Chevrolet
9BF|Ford do Brasil|Ford
9BR|Toyota do Brasil|Toyota
6FP|Ford Motor Company of Australia|Ford
6G1|General Motors-Holden|Holden
6T1|Toyota Motor Corporation Australia|Toyota
6MM|Mitsubishi Motors Australia|Mitsubishi
AHT|Toyota South Africa|Toyota
AAV|Volkswagen of South Africa|Volkswagen
ADM|General Motors South Africa|Chevrolet
`;

export interface WmiEntry { wmi: string; manufacturer: string; make: string }

export const wmiTable: ReadonlyMap<string, WmiEntry> = new Map(
  ROWS.trim().split('\n').map((line) => {
    const [wmi, manufacturer, make] = line.split('|') as [string, string, string];
    return [wmi, { wmi, manufacturer, make }];
  }),
);
